/* The comma operator: left for effect, right is the value. */
int f(int);
int g;

int comma(int a, int b) {
    int x = (f(a), f(b));
    a = 1, b = 2;
    for (a = 0, b = 10; a < b; a++, b--)
        g = a;
    if (g = a, g > b)
        return (b++, a);
    return x;
}
