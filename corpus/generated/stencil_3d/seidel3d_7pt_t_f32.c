/*
 * 3-D 7-point Gauss-Seidel, 7-point, in place (Gauss-Seidel), time loop (float).
 */
void seidel3d_7pt_t_f32(int tsteps, int nx, float A[nx][nx][nx])
{
    int t, i, j, k;

    for (t = 0; t < tsteps; t++)
        for (i = 1; i < nx - 1; i++)
            for (j = 1; j < nx - 1; j++)
                for (k = 1; k < nx - 1; k++)
                    A[i][j][k] = 0.1438f * A[i][j][k]
                        + 0.1344f * (A[i - 1][j][k] + A[i + 1][j][k] + A[i][j - 1][k]
                        + A[i][j + 1][k] + A[i][j][k - 1] + A[i][j][k + 1]);
}
