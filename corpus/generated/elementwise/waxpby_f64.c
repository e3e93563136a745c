/*
 * waxpby w = alpha x + beta y into a third vector (double).
 */
void waxpby_f64(int n, double alpha, double beta, double x[n], double y[n], double w[n])
{
    for (int i = 0; i < n; i++)
        w[i] = alpha * x[i] + beta * y[i];
}
