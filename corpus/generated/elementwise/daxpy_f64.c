/*
 * daxpy y = y + a x (written out) (double).
 */
void daxpy_f64(int n, double a, double x[n], double y[n])
{
    for (int i = 0; i < n; i++)
        y[i] = y[i] + a * x[i];
}
