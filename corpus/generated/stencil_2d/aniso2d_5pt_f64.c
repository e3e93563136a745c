/*
 * 2-D anisotropic 5-point stencil (x and y weights differ), 5-point, no time loop (double).
 */
void aniso2d_5pt_f64(int n, double A[n][n], double B[n][n])
{
    for (int i = 1; i < n - 1; i++)
        for (int j = 1; j < n - 1; j++)
            B[i][j] = 0.1138 * A[i][j] + 0.1758 * (A[i - 1][j] + A[i + 1][j])
                + 0.2673 * (A[i][j - 1] + A[i][j + 1]);
}
