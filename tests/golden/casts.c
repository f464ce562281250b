/* Casts: arithmetic, pointer, (void), to and from integers. */
struct s { int a; };
int g;
int f(void);

long casts(int x, char c, double d, void *vp) {
    long l = (long)x;
    unsigned char uc = (unsigned char)x;
    int i = (int)d;
    double e = (double)c;
    struct s *sp = (struct s *)vp;
    unsigned long addr = (unsigned long)sp;
    (void)x;
    (void)f();
    (void)(g = 3);
    int *ip = (int *)(char *)vp + 1;
    return l + uc + i + (long)e + (long)addr + ((struct s *)vp)->a + *ip;
}
