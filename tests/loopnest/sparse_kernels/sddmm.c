/* Sampled dense-dense product: out = val .* (A B^T) at the nonzeros of a CSR pattern. */
void sddmm(int n, int m, int nnz, int K, const int rowptr[n + 1], const int col[nnz], const double val[nnz],
           const double A[n][K], const double B[m][K], double out[nnz])
{
    for (int i = 0; i < n; i++)
        for (int j = rowptr[i]; j < rowptr[i + 1]; j++) {
            double s = 0.0;
            for (int k = 0; k < K; k++)
                s += A[i][k] * B[col[j]][k];
            out[j] = val[j] * s;
        }
}
