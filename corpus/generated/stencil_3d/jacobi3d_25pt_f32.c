/*
 * 3-D stencil, 25-point, no time loop (float).
 */
void jacobi3d_25pt_f32(int nx, int ny, int nz, float A[nx][ny][nz], float B[nx][ny][nz])
{
    for (int i = 4; i < nx - 4; i++)
        for (int j = 4; j < ny - 4; j++)
            for (int k = 4; k < nz - 4; k++)
                B[i][j][k] = 0.032f * A[i][j][k]
                    + 0.047f * (A[i - 1][j][k] + A[i + 1][j][k] + A[i][j - 1][k]
                    + A[i][j + 1][k] + A[i][j][k - 1] + A[i][j][k + 1])
                    + 0.0417f * (A[i - 2][j][k] + A[i + 2][j][k] + A[i][j - 2][k]
                    + A[i][j + 2][k] + A[i][j][k - 2] + A[i][j][k + 2])
                    + 0.048f * (A[i - 3][j][k] + A[i + 3][j][k] + A[i][j - 3][k]
                    + A[i][j + 3][k] + A[i][j][k - 3] + A[i][j][k + 3])
                    + 0.0247f * (A[i - 4][j][k] + A[i + 4][j][k] + A[i][j - 4][k]
                    + A[i][j + 4][k] + A[i][j][k - 4] + A[i][j][k + 4]);
}
