/* 3-point Jacobi with a time loop: smooth into B, then copy back into A. */
void jacobi1d_steps(int tsteps, int n, double A[n], double B[n])
{
    int t, i;

    for (t = 0; t < tsteps; t++) {
        for (i = 1; i < n - 1; i++)
            B[i] = 0.33333 * (A[i - 1] + A[i] + A[i + 1]);
        for (i = 1; i < n - 1; i++)
            A[i] = B[i];
    }
}
