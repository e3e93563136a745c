/*
 * scaled transpose B[j][i] = s A[i][j] (double).
 */
void scaled_copy_t_f64(int n, int m, double s, double A[n][m], double B[m][n])
{
    int i, j;

    for (i = 0; i < n; i++)
        for (j = 0; j < m; j++)
            B[j][i] = s * A[i][j];
}
