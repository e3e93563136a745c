/*
 * dot product (double).
 */
double dot_f64(int n, double x[n], double y[n])
{
    double s = 0.0;

    for (int i = 0; i < n; i++)
        s += x[i] * y[i];
    return s;
}
