/*
 * vector copy (double).
 */
void copy1d_f64(int n, double x[n], double y[n])
{
    int i;

    for (i = 0; i < n; i++)
        y[i] = x[i];
}
