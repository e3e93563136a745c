/*
 * Partial support: the first nest (in-place scaling) is analysable, the
 * second one scatters through an index array into y, whose extent is not declared, and must be rejected.
 */
void scale_then_scatter(int n, int idx[n], double x[n], double *y)
{
    int i;

    for (i = 0; i < n; i++)
        x[i] = 2.0 * x[i];
    for (i = 0; i < n; i++)
        y[idx[i]] += x[i];
}
