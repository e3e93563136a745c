/*
 * scale the strictly lower triangle by a row factor and add the transposed upper triangle
 * (double).
 */
void tri_lower_scale_f64(int n, double A[n][n], double d[n])
{
    for (int i = 1; i < n; i++)
        for (int j = 0; j < i; j++)
            A[i][j] = d[i] * A[i][j] + A[j][i];
}
