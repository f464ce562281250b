/* Compound assignment, ++ and -- (prefix, postfix, for effect and as values, on pointers),
   and the value of an assignment. */
int f(int);
struct s { int n; int *p; };
int g;
int arr[10];

void effects(int x, int *p, struct s *sp) {
    x += 2;
    x <<= 1;
    g -= x;
    *p *= 3;
    sp->n |= 4;
    arr[x] ^= 5;
    x++;
    ++x;
    x--;
    --x;
    p++;
    --p;
    sp->n++;
    (*sp).p--;
}

int values(int x, int *p, int *q) {
    int a = x++;
    int b = ++x;
    int c = *p++;
    int d = *++p;
    *q++ = *p--;
    arr[x++] = a;
    return a + b + c + d + (g += 1);
}

long ptrdiff(int *p, int *q) {
    p += 3;
    q -= 2;
    return q - p;
}

int assignment_values(int x, int *p) {
    int y = (x = 3);
    f(*p = 4);
    y = x = g = 5;
    return (g += 1) + f(0);
}

int pre_then_call(void) {
    return ++g + f(0);
}
