/*
 * indexed axpy y[i] += a * x[idx[i]] (double).
 */
void gather_axpy_f64(int n, int m, double a, int idx[n], double x[m], double y[n])
{
    int i;

    for (i = 0; i < n; i++)
        y[i] += a * x[idx[i]];
}
