/* Loops: for, while, do-while, with break and continue, nested, infinite. */
int f(int);
int g;

int for_loop(int n) {
    int s = 0;
    for (int i = 0; i < n; i++) {
        if (i == 3)
            continue;
        if (i == 7)
            break;
        s += i;
    }
    return s;
}

void while_loop(int n) {
    while (n > 0) {
        n--;
        if (f(n))
            continue;
        g = n;
    }
}

void do_while(int n) {
    do {
        if (n == 5)
            break;
        if (n == 2)
            continue;
        g += n;
    } while (--n);
}

void nested(int n) {
    for (int i = 0; i < n; i++)
        for (int j = 0; j < n; j++) {
            if (j > i)
                break;
            if (j == i)
                continue;
            g += i * j;
        }
}

void forever(void) {
    for (;;) {
        if (f(0))
            break;
    }
    while (1)
        if (f(1))
            return;
}

void empty_bodies(int n) {
    while (f(n))
        ;
    for (; n; n--)
        ;
    do ; while (f(n));
}
