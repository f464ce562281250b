/* Struct copies: assignment, initialization, passing and returning structs, members. */
struct point { int x; int y; };
struct box { struct point lo, hi; int tag; };

struct point make(int x, int y);
void take(struct point p);
struct point gp;

struct point copy_around(struct point a, struct point *pp) {
    struct point b = a;
    struct point c;
    c = b;
    *pp = c;
    gp = *pp;
    take(gp);
    b = make(1, 2);
    return b;
}

int members(struct box *bp, struct box bx) {
    bx.lo = bp->hi;
    bp->lo.x = bx.hi.y;
    (*bp).tag = make(3, 4).y;
    return bp->hi.x + bx.lo.y;
}

struct box nested(struct box *bp) {
    struct box b = *bp;
    struct point p = b.hi;
    b.lo = p;
    return b;
}
