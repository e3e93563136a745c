/*
 * 1-D wave equation, leapfrog with three time levels and rotation of the arrays each step
 * (double).
 */
void wave1d_f64(int tsteps, int n, double up[n], double u[n], double un[n])
{
    int t, i;

    for (t = 0; t < tsteps; t++) {
        for (i = 1; i < n - 1; i++)
            un[i] = 2.0 * u[i] - up[i] + 0.2 * (u[i - 1] - 2.0 * u[i] + u[i + 1]);
        for (i = 1; i < n - 1; i++) {
            up[i] = u[i];
            u[i] = un[i];
        }
    }
}
