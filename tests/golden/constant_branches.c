// Branches on integer constant expressions: the compiler removes the dead arm, so the
// lowering empties it (no call, no assignment is seen by any analysis).
int g, h;
int held(int *lock);
int pick(int n);

void config_off(void) {
    if (0) {
        g = 1;
    }
    if (sizeof(long) == 8)
        h = 1;
    else
        h = 2;
}

void lockdep_off(int *lock) {
    // RCU_LOCKDEP_WARN without CONFIG_PROVE_RCU.
    do { } while (0 && held(lock));
    g = 2;
}

void size_switch(void) {
    switch (sizeof(int)) {
    case 1:
        g = 10;
        break;
    case 4:
        g = 40;
        // falls through
    case 8:
        h = 80;
        break;
    default:
        pick(0);
    }
}

void maybe_constant(int n) {
    // GCC may find `n` constant after inlining: both arms stay.
    if (__builtin_constant_p(n) && n < 8)
        g = n;
    else
        g = pick(n);
}

void label_in_dead_code(int x) {
    if (0) {
    again:
        g = 3;
    }
    if (x)
        goto again;
}
