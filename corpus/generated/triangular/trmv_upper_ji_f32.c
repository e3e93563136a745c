/*
 * upper-triangular matrix-vector product y += T x, ji order (float).
 */
void trmv_upper_ji_f32(int n, float T[n][n], float x[n], float y[n])
{
    int j, i;

    for (j = 0; j < n; j++)
        for (i = 0; i <= j; i++)
            y[i] += T[i][j] * x[j];
}
