/* Short-circuit && and || : in conditions (straight into branches) and as values. */
int f(int);
int g;

void in_conditions(int a, int b, int c) {
    if (a && b)
        g = 1;
    if (a || b)
        g = 2;
    if (a && (b || c))
        g = 3;
    if (!(a && b))
        g = 4;
    while (a-- && f(b))
        g = 5;
}

int as_values(int a, int b) {
    int x = a && b;
    int y = a || f(b);
    return x + y + (a && !b);
}

void for_effect(int a, int *p) {
    a && f(1);
    a || (*p = 2);
    p && *p && f(*p);
}
