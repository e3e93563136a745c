/*
 * sum of all matrix entries, row by row (float).
 */
float sum2d_ij_f32(int n, int m, float A[n][m])
{
    int i, j;
    float s = 0.0f;

    for (i = 0; i < n; i++)
        for (j = 0; j < m; j++)
            s += A[i][j];
    return s;
}
