/* switch: cases, GNU case ranges, default (first, middle, last, absent), fallthrough, break,
   continue in a switch in a loop, nested switches, code before the first case. */
int f(int);
int g;

int basic(int x) {
    int r = 0;
    switch (x) {
    case 1:
        r = 10;
        break;
    case 2:
    case 3:
        r = 20;
    case 4:
        r += 1;
        break;
    case 'a' ... 'z':
        r = 30;
        break;
    default:
        r = -1;
    }
    return r;
}

void code_before_case(int x) {
    switch (x) {
        g = 9;
    case 1:
        g = 1;
    }
    switch (x) { }
}

void default_first(int x) {
    switch (f(x)) {
    default:
        g = 0;
    case 5:
        g = 5;
    }
}

void no_default_in_loop(int n) {
    for (int i = 0; i < n; i++) {
        switch (i) {
        case 0:
            continue;
        case 1:
            break;
        }
        g += i;
    }
}

void nested(int a, int b) {
    switch (a) {
    case 1:
        switch (b) {
        case 1:
            g = 11;
            break;
        default:
            g = 10;
        }
        break;
    case 2:
        g = 2;
    }
}

void duff(int *to, int *from, int count) {
    int n = (count + 3) / 4;
    switch (count % 4) {
    case 0: do { *to = *from++;
    case 3:      *to = *from++;
    case 2:      *to = *from++;
    case 1:      *to = *from++;
            } while (--n > 0);
    }
}
