/* Forward substitution: solve L x = b for lower-triangular L. */
void forward_subst(int n, double L[n][n], double b[n], double x[n])
{
    for (int i = 0; i < n; i++) {
        x[i] = b[i];
        for (int j = 0; j < i; j++)
            x[i] -= L[i][j] * x[j];
        x[i] = x[i] / L[i][i];
    }
}
