/* Arrays: decay when passed or assigned, a[i] on an array vs p[i] on a pointer, &a[1], strings. */
void use(int *p);
void puts_(const char *s);
int ga[4];
int gm[2][3];

int decay(int *p, int i) {
    int a[4];
    int *q = a;
    use(a);
    use(ga);
    use(&a[1]);
    use(&ga[i]);
    a[i] = p[i];
    q[1] = ga[2];
    return *(a + 2) + *(p + i) + i[a];
}

int matrix(int (*m)[3], int i, int j) {
    int local[2][3];
    local[i][j] = gm[j][i];
    use(local[1]);
    return m[i][j];
}

char strings(int i) {
    char buf[8] = "hey";
    char *s = "hello";
    puts_("world");
    puts_(buf);
    return s[i] + "abc"[i] + buf[i];
}

struct holder { int vals[3]; int *ptr; };

int in_structs(struct holder *h, struct holder st, int i) {
    use(h->vals);
    use(st.vals);
    return h->vals[i] + h->ptr[i] + st.vals[i];
}
