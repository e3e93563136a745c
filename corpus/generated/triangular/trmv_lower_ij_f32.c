/*
 * lower-triangular matrix-vector product y += T x, ij order (float).
 */
void trmv_lower_ij_f32(int n, float T[n][n], float x[n], float y[n])
{
    int i, j;

    for (i = 0; i < n; ++i)
        for (j = 0; j <= i; ++j)
            y[i] += T[i][j] * x[j];
}
