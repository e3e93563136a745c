/*
 * 2-D 9-point box stencil traversed column by column, 9-point, time loop with copy-back, loop
 * order ji (float).
 */
void jacobi2d_9pt_box_ji_copy_f32(int tsteps, int n, float A[n][n], float B[n][n])
{
    for (int t = 0; t < tsteps; t++) {
        for (int j = 1; j < n - 1; j++)
            for (int i = 1; i < n - 1; i++)
                B[i][j] = 0.0898f * A[i][j]
                    + 0.0797f * (A[i - 1][j] + A[i][j - 1] + A[i][j + 1] + A[i + 1][j])
                    + 0.1479f * (A[i - 1][j - 1] + A[i - 1][j + 1] + A[i + 1][j - 1]
                    + A[i + 1][j + 1]);
        for (int j = 1; j < n - 1; j++)
            for (int i = 1; i < n - 1; i++)
                A[i][j] = B[i][j];
    }
}
