/*
 * batched forward substitution L[b] x[b] = b[b] in place (diagonal shifted by n) (float).
 */
void btrsv_lower_f32(int nb, int n, float L[nb][n][n], float x[nb][n])
{
    for (int b = 0; b < nb; b++)
        for (int i = 0; i < n; i++) {
            for (int j = 0; j < i; j++)
                x[b][i] -= L[b][i][j] * x[b][j];
            x[b][i] /= L[b][i][i] + n;
        }
}
