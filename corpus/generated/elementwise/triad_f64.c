/*
 * STREAM triad a = b + s c (double).
 */
void triad_f64(int n, double s, double a[n], double b[n], double c[n])
{
    for (int i = 0; i < n; i++)
        a[i] = b[i] + s * c[i];
}
