/* The kernels of the sparse benchmark (benchmarks/sparse.py), in double precision.
 * A is an n x m sparse matrix in CSR: row i holds the entries rowptr[i] .. rowptr[i+1]-1, with their
 * columns in col and their values in val; nnz is the capacity of col and val (the matrix may hold
 * fewer entries: rowptr[n]). Not part of the corpus (the corpus family "sparse" is training data). */

/* SpMV: y = A x. */
void spmv_csr(int n, int m, int nnz, const int rowptr[n + 1], const int col[nnz], const double val[nnz],
              const double x[m], double y[n])
{
    for (int i = 0; i < n; i++) {
        double s = 0.0;
        for (int j = rowptr[i]; j < rowptr[i + 1]; j++)
            s += val[j] * x[col[j]];
        y[i] = s;
    }
}

/* SpMM: C += A B, with B (m x k) and C (n x k) dense, row-major. */
void spmm_csr(int n, int m, int nnz, int k, const int rowptr[n + 1], const int col[nnz], const double val[nnz],
              const double B[m][k], double C[n][k])
{
    for (int i = 0; i < n; i++)
        for (int j = rowptr[i]; j < rowptr[i + 1]; j++)
            for (int p = 0; p < k; p++)
                C[i][p] += val[j] * B[col[j]][p];
}
