/*
 * reconstruct A = L U from triangular factors: k runs to min(i, j) (float).
 */
void lu_product_f32(int n, float A[n][n], float L[n][n], float U[n][n])
{
    for (int i = 0; i < n; i++)
        for (int j = 0; j < n; j++)
            for (int k = 0; k <= i && k <= j; k++)
                A[i][j] += L[i][k] * U[k][j];
}
