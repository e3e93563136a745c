/* axpy: y <- alpha * x + y over double vectors of length n. */
void axpy(int n, double alpha, double x[n], double y[n])
{
    for (int i = 0; i < n; i++)
        y[i] = alpha * x[i] + y[i];
}
