/* One sweep of a 3-point Jacobi smoother: B is written from A only. */
void jacobi1d(int n, double A[n], double B[n])
{
    for (int i = 1; i < n - 1; i++)
        B[i] = (A[i - 1] + A[i] + A[i + 1]) / 3.0;
}
