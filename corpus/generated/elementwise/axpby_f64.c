/*
 * axpby y = alpha x + beta y (double).
 */
void axpby_f64(int n, double alpha, double beta, double x[n], double y[n])
{
    for (int i = 0; i < n; ++i)
        y[i] = alpha * x[i] + beta * y[i];
}
