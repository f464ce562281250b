// KNOWN BUG: after a nested designator `.in.x = 1` the next initializer goes to the next top-level member (z = 2) instead of in.y (C: in.y = 2, z = 3).
// (approximation, by design) members not named by a local initializer are not zeroed (v[1], q->y).
/* Initializers: designated, nested, arrays of structs, static locals, compound literals,
   string arrays, scalars in braces, incomplete arrays completed by their initializer. */
struct point { int x; int y; };
struct line { struct point a, b; const char *name; };

int scalars[] = { 1, 2, 3 };
int sparse[5] = { [1] = 10, [3] = 30, 40 };
struct point origin = { 0, 0 };
struct point desig = { .y = 2, .x = 1 };
struct line ln = { { 1, 2 }, .b = { .x = 3 }, "diag" };
struct point pts[] = { { 1, 2 }, [2] = { 5, 6 }, { .y = 8 } };
char msg[] = "hi";
int braced = { 7 };
int *lit_ptr = (int[]){ 4, 5 };
struct point *pp = &(struct point){ 9, 9 };
int ranged[4] = { [0 ... 2] = 7, 8 };
struct wrap { struct point in; int z; };
struct wrap nested_desig = { .in.x = 1, 2, 3 };
struct vec { int v[2]; int w; };
struct vec elided = { 1, 2, 3 };
int grid[2][2] = { 1, 2, 3, 4 };

int f(int);

int locals(int a) {
    struct point p = { a, f(a) };
    struct line l = { .a = p, .b.y = a, .name = "l" };
    int v[3] = { [2] = a, [0] = 1 };
    char s[] = "abc";
    static int counter = 5;
    static struct point sp = { 1, 2 };
    struct point *q = &(struct point){ .x = a };
    counter++;
    return p.x + l.b.y + v[2] + s[0] + counter + sp.y + q->x;
}

int compound_value(int a) {
    struct point p;
    p = (struct point){ a, a + 1 };
    return ((struct point){ 3, 4 }).y + p.y;
}
