/*
 * 2-D box stencil, 9-point, time loop with copy-back (float).
 */
void jacobi2d_9pt_box_copy_f32(int tsteps, int n, float A[n][n], float B[n][n])
{
    int t, i, j;

    for (t = 0; t < tsteps; t++) {
        for (i = 1; i < n - 1; i++)
            for (j = 1; j < n - 1; j++)
                B[i][j] = 0.0787f * A[i][j]
                    + 0.13f * (A[i - 1][j] + A[i][j - 1] + A[i][j + 1] + A[i + 1][j])
                    + 0.0878f * (A[i - 1][j - 1] + A[i - 1][j + 1] + A[i + 1][j - 1]
                    + A[i + 1][j + 1]);
        for (i = 1; i < n - 1; i++)
            for (j = 1; j < n - 1; j++)
                A[i][j] = B[i][j];
    }
}
