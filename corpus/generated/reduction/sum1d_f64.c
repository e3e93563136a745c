/*
 * sum of a vector into a scalar accumulator (double).
 */
double sum1d_f64(int n, double x[n])
{
    double s = 0.0;

    for (int i = 0; i < n; i++)
        s += x[i];
    return s;
}
