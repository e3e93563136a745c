/*
 * 1-D 3-point stencil with variable coefficients a, b, c (double).
 */
void varcoef1d_f64(int n, double A[n], double B[n], double a[n], double b[n], double c[n])
{
    for (int i = 1; i < n - 1; i++)
        B[i] = 0.3 * (a[i] * A[i - 1] + b[i] * A[i] + c[i] * A[i + 1]);
}
