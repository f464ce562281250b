/* Variable flags: _Atomic, volatile, __thread/_Thread_local, address taken. */
_Atomic int atomic_counter;
_Atomic(long) atomic_long;
volatile int vol;
int *volatile vol_ptr;
volatile int *ptr_to_vol;
__thread int tls;
_Thread_local int tls2;
static __thread int tls_static;
volatile int vol_arr[4];
_Atomic int atomic_arr[4];
int only_sized;
unsigned long size = sizeof(&only_sized);
int plain;
int taken;
int decayed[4];

void use(int *p);

void locals(volatile int vp) {
    volatile int v = 1;
    _Atomic int a = 2;
    static __thread int stls;
    static volatile int svol;
    int addr;
    int arr[4];
    int plain_local = 0;
    use(&addr);
    use(arr);
    use(&taken);
    use(decayed);
    v++;
    a += 1;
    stls = svol + vp + plain_local;
    atomic_counter++;
    tls = tls2 + tls_static + vol + *vol_ptr + *ptr_to_vol + vol_arr[0] + atomic_arr[1] + plain;
}
