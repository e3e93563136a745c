/*
 * divergence of a vector field by central differences, three input components (float).
 */
void divergence3d_f32(int nx, float U[nx][nx][nx], float V[nx][nx][nx], float W[nx][nx][nx],
                      float D[nx][nx][nx])
{
    int i, j, k;

    for (i = 1; i < nx - 1; i++)
        for (j = 1; j < nx - 1; j++)
            for (k = 1; k < nx - 1; k++)
                D[i][j][k] = 0.5f * (U[i + 1][j][k] - U[i - 1][j][k]
                    + V[i][j + 1][k] - V[i][j - 1][k] + W[i][j][k + 1] - W[i][j][k - 1]);
}
