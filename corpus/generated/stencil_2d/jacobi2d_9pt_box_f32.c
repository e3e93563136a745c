/*
 * 2-D box stencil, 9-point, no time loop (float).
 */
void jacobi2d_9pt_box_f32(int n, int m, float A[n][m], float B[n][m])
{
    for (int i = 1; i < n - 1; ++i)
        for (int j = 1; j < m - 1; ++j)
            B[i][j] = 0.1622f * A[i][j]
                + 0.0703f * (A[i - 1][j] + A[i][j - 1] + A[i][j + 1] + A[i + 1][j])
                + 0.1367f * (A[i - 1][j - 1] + A[i - 1][j + 1] + A[i + 1][j - 1]
                + A[i + 1][j + 1]);
}
