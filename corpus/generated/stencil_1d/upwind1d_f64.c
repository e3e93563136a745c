/*
 * first-order upwind advection u -= c (u[i] - u[i-1]) with a time loop and copy-back (double).
 */
void upwind1d_f64(int tsteps, int n, double u[n], double v[n])
{
    for (int t = 0; t < tsteps; t++) {
        for (int i = 1; i < n; i++)
            v[i] = u[i] - 0.3 * (u[i] - u[i - 1]);
        for (int i = 1; i < n; i++)
            u[i] = v[i];
    }
}
