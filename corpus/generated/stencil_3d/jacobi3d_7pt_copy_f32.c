/*
 * 3-D stencil, 7-point, time loop with copy-back (float).
 */
void jacobi3d_7pt_copy_f32(int tsteps, int nx, float A[nx][nx][nx], float B[nx][nx][nx])
{
    for (int t = 0; t < tsteps; t++) {
        for (int i = 1; i < nx - 1; i++)
            for (int j = 1; j < nx - 1; j++)
                for (int k = 1; k < nx - 1; k++)
                    B[i][j][k] = 0.1835f * A[i][j][k]
                        + 0.1361f * (A[i - 1][j][k] + A[i + 1][j][k] + A[i][j - 1][k]
                        + A[i][j + 1][k] + A[i][j][k - 1] + A[i][j][k + 1]);
        for (int i = 1; i < nx - 1; i++)
            for (int j = 1; j < nx - 1; j++)
                for (int k = 1; k < nx - 1; k++)
                    A[i][j][k] = B[i][j][k];
    }
}
