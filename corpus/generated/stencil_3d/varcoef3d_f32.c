/*
 * 3-D 7-point stencil with per-point coefficient arrays (float).
 */
void varcoef3d_f32(int nx, int ny, int nz, float A[nx][ny][nz], float B[nx][ny][nz],
                   float c0[nx][ny][nz], float c1[nx][ny][nz], float c2[nx][ny][nz],
                   float c3[nx][ny][nz])
{
    for (int i = 1; i < nx - 1; i++)
        for (int j = 1; j < ny - 1; j++)
            for (int k = 1; k < nz - 1; k++)
                B[i][j][k] = 0.14f * (c0[i][j][k] * A[i][j][k] + c1[i][j][k] * (A[i - 1][j][k] + A[i + 1][j][k])
                    + c2[i][j][k] * (A[i][j - 1][k] + A[i][j + 1][k])
                    + c3[i][j][k] * (A[i][j][k - 1] + A[i][j][k + 1]));
}
