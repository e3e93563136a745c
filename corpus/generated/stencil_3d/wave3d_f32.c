/*
 * 3-D wave equation, leapfrog with three rotated levels (float).
 */
void wave3d_f32(int tsteps, int nx, int ny, int nz, float P[nx][ny][nz], float U[nx][ny][nz],
                float N[nx][ny][nz])
{
    int t, i, j, k;

    for (t = 0; t < tsteps; t++) {
        for (i = 1; i < nx - 1; i++)
            for (j = 1; j < ny - 1; j++)
                for (k = 1; k < nz - 1; k++)
                    N[i][j][k] = 2.0f * U[i][j][k] - P[i][j][k]
                        + 0.05f * (U[i - 1][j][k] + U[i + 1][j][k] + U[i][j - 1][k]
                        + U[i][j + 1][k] + U[i][j][k - 1] + U[i][j][k + 1] - 6.0f * U[i][j][k]);
        for (i = 1; i < nx - 1; i++)
            for (j = 1; j < ny - 1; j++)
                for (k = 1; k < nz - 1; k++) {
                    P[i][j][k] = U[i][j][k];
                    U[i][j][k] = N[i][j][k];
                }
    }
}
