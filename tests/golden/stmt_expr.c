// (minor) `({ f(1); f(2); })` for effect still stores f(2) into a temporary.
/* GNU statement expressions: the statements run in order, the last expression is the value. */
int f(int);
int g;

int value(int a) {
    int x = ({ int t = f(a); t + 1; });
    int y = ({ g = a; g; }) + 2;
    ({ f(1); f(2); });
    return x + y;
}

int with_control(int a) {
    int m = ({ int r; if (a > 0) r = a; else r = -a; r; });
    return ({ int i, s = 0; for (i = 0; i < m; i++) s += i; s; });
}

void void_stmt_expr(int a) {
    ({ if (a) g = 1; });
}

int local_labels(int a) {
    int x = ({ __label__ out; int r = 1; if (a) goto out; r = 2; out: r; });
    int y = ({ __label__ out; int r = 3; if (a > 1) goto out; r = 4; out: r; });
    return x + y;
}
