/* goto and labels: forward, backward, label at the end of a block, labels on loops. */
int f(int);
int g;

int forward(int x) {
    if (x)
        goto out;
    g = 1;
out:
    return g;
}

void backward(int n) {
again:
    n--;
    if (n > 0)
        goto again;
    g = n;
}

void label_at_end(int x) {
    {
        if (x)
            goto end;
        g = 2;
    end:;
    }
    g = 3;
}

int error_path(int x) {
    int r = -1;
    if (f(x) < 0)
        goto fail;
    if (f(x + 1) < 0)
        goto fail_first;
    r = 0;
    goto done;
fail_first:
    f(-x);
fail:
    r = -2;
done:
    return r;
}
