/*
 * 2-D wave equation (leapfrog, three levels rotated each step) (double).
 */
void wave2d_f64(int tsteps, int n, double P[n][n], double U[n][n], double N[n][n])
{
    for (int t = 0; t < tsteps; t++) {
        for (int i = 1; i < n - 1; i++)
            for (int j = 1; j < n - 1; j++)
                N[i][j] = 2.0 * U[i][j] - P[i][j]
                    + 0.1 * (U[i - 1][j] + U[i + 1][j] + U[i][j - 1] + U[i][j + 1] - 4.0 * U[i][j]);
        for (int i = 1; i < n - 1; i++)
            for (int j = 1; j < n - 1; j++) {
                P[i][j] = U[i][j];
                U[i][j] = N[i][j];
            }
    }
}
