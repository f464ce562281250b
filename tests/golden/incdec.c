// KNOWN BUG: the value of an assignment, compound assignment or prefix ++/-- is the assigned lvalue read again later, not the value assigned: in assignment_values and pre_then_call `(g += 1) + f(0)` / `++g + f(0)` read g after the call to f (which may change g; C uses the value stored), and `f(*p = 4)`, `y = (x = 3)` add reads of *p and x.
// KNOWN BUG (locations, parser): a parenthesised primary has the span of its contents, so `(*sp).p--` is located at the `*` (col 6), not at the `(` (col 5).
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
