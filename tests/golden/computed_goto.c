/* GNU computed goto: `&&label` tables and `goto *p`. */
int g;

int interp(const unsigned char *code) {
    static void *dispatch[] = { &&op_inc, &&op_dec, &&op_halt };
    int acc = 0;
    goto *dispatch[*code++];
op_inc:
    acc++;
    goto *dispatch[*code++];
op_dec:
    acc--;
    goto *dispatch[*code++];
op_halt:
    return acc;
}

void local_target(int c) {
    void *p = c ? &&a : &&b;
    goto *p;
a:
    g = 1;
b:
    g = 2;
}
