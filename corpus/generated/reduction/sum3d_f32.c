/*
 * sum of a 3-D array (float).
 */
float sum3d_f32(int n, int m, int p, float A[n][m][p])
{
    int i, j, k;
    float s = 0.0f;

    for (i = 0; i < n; i++)
        for (j = 0; j < m; j++)
            for (k = 0; k < p; k++)
                s += A[i][j][k];
    return s;
}
