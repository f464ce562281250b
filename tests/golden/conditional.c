/* The conditional operator: as a value, with void arms, nested, GNU `a ?: b`. */
int f(int);
void v1(void);
void v2(void);
int g;

int value(int c, int a, int b) {
    int x = c ? a : b;
    x = c ? f(a) : f(b);
    return c ? (a ? 1 : 2) : 3;
}

void void_arms(int c) {
    c ? v1() : v2();
    if (c ? g : 0)
        v1();
}

long gnu(long a, long b) {
    long x = a ?: b;
    return f(1) ?: f(2);
}

int *pointer_arms(int c, int *p) {
    return c ? 0 : p;
}

double mixed_arms(int c) {
    return c ? 1 : 2.5;
}

void ret_void(void) {
    return v1();
}
