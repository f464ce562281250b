/* Function pointers: through a variable, (*fp)(x) and fp(x), &f, in structs, arrays of them. */
int inc(int x);
int dec(int x);
typedef int (*op_t)(int);

struct ops { op_t run; int (*check)(int, int); };
op_t table[2] = { inc, &dec };
struct ops gops = { .run = inc };

int direct(int x) {
    op_t fp = inc;
    int (*fq)(int) = &dec;
    x = fp(x);
    x = (*fp)(x);
    x = (**fq)(x);
    x = (&inc)(x);
    return fq(x);
}

int via_struct(struct ops *o, struct ops s, int x) {
    o->run = dec;
    x = o->run(x);
    x = (*o->run)(x);
    x = s.check(x, 1);
    return gops.run(x);
}

int via_array(int i, int x) {
    op_t local[2] = { dec, inc };
    table[i](x);
    x = (*table[i])(x);
    return local[i](x);
}

op_t pick(int c) {
    return c ? inc : dec;
}

int call_returned(int c, int x) {
    return pick(c)(x);
}
