/* Rejected (break): the loop may exit early, so its trip count is not affine. */
void diagonal_prefix(int n, int m, double A[n][m])
{
    for (int i = 0; i < n; i++) {
        if (i >= m)
            break;
        A[i][i] = 1.0;
    }
}
